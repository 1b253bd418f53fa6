#!/usr/bin/env node
// Runs the test provider from TypeScript through tsx's loader (docs/decisions/001-running-typescript.md).
import { register } from 'tsx/esm/api';

register();
await import('./main.ts');
