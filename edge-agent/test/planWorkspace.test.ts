import { TmpScratchSpace } from '../src/adapters/fs/TmpScratchSpace.js';
import { CliGitProbe } from '../src/adapters/git/CliGitProbe.js';
import { runGitProbeContract, runScratchSpaceContract } from './planWorkspaceContract.js';

runGitProbeContract('CliGitProbe', () => new CliGitProbe());
runScratchSpaceContract('TmpScratchSpace', (base) => new TmpScratchSpace(base));
