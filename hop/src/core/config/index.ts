export { didYouMean, editDistance } from './didYouMean.js';
export { keyPath, shown, valueAt } from './keyPath.js';
export { addressInUseProblem, ConfigProblem, listenAs } from './listenProblem.js';
export { checkConfig, type SchemaCheck } from './problems.js';
