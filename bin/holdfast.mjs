#!/usr/bin/env node
// The `holdfast` CLI entry: runs the TypeScript sources through tsx so `npx holdfast` works
// right after `npm ci`, with no build step.
import { register } from 'tsx/esm/api';

register();
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv);
