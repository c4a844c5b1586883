#!/usr/bin/env node
// The `fengyu` command (what `npm start` runs): loads the TypeScript sources through tsx.
import { register } from 'tsx/esm/api';

register();
await import('../packages/host/src/cli/main.ts');
