#!/usr/bin/env node
// The fake terraform, run from TypeScript through tsx's loader (docs/decisions/001-running-typescript.md).
import { register } from 'tsx/esm/api';

register();
await import('../src/fakeTerraform.ts');
