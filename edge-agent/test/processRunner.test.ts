import { NodeProcessRunner } from '../src/adapters/process/NodeProcessRunner.js';
import { runProcessRunnerContract } from './processRunnerContract.js';

runProcessRunnerContract('NodeProcessRunner', () => new NodeProcessRunner());
