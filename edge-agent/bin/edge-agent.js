#!/usr/bin/env node
// Runs the TypeScript CLI through tsx's loader (docs/decisions/001-running-typescript.md).
import { register } from 'tsx/esm/api';

register();
await import('../src/cli.ts');
