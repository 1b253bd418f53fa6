import { CliGitMirror } from '../src/adapters/git/CliGitMirror.js';
import { runSourceMirrorContract } from './sourceMirrorContract.js';

runSourceMirrorContract('CliGitMirror', (dir) => new CliGitMirror(dir));
