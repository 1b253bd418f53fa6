import { render } from 'preact';
import { systemClock } from './adapters/browser/systemClock.js';
import { FetchEventStream } from './adapters/http/FetchEventStream.js';
import { HttpApi } from './adapters/http/HttpApi.js';
import { App } from './components/App.js';
import { ServicesContext } from './services.js';
import './styles.css';
import './dense.css';

const services = {
  api: new HttpApi(),
  clock: systemClock,
  live: new FetchEventStream({
    clock: systemClock,
    autoStart: false,
    onInvalid: (name) =>
      console.warn(`driftline: ignored a '${name}' event this dashboard does not understand`),
  }),
};

render(
  <ServicesContext.Provider value={services}>
    <App />
  </ServicesContext.Provider>,
  document.getElementById('app')!,
);
