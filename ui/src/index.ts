export { App } from './components/App.js';
export { type Services, ServicesContext } from './services.js';
