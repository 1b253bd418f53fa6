import { describe } from 'vitest';
import { runTerraformContract } from './contract.js';
import { runIssue43Contract } from './contractIssue43.js';
import { fakeTool } from './tools.js';

// The Terraform contract against the simulation's fake (simulation/bin/terraform): where it disagrees
// with the real binary (contractReal.test.ts), the fake is wrong.
describe('Terraform contract: the simulation fake', () => {
  runTerraformContract(fakeTool());
  runIssue43Contract(fakeTool());
});
