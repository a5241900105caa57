#!/usr/bin/env node
// The `holdfast` CLI entry: the prebuilt bundle while it is fresh, else the TypeScript sources
// through tsx (see entry.mjs for the rule and why).
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cliEntry } from './entry.mjs';

const entry = cliEntry(fileURLToPath(new URL('..', import.meta.url)));
if (entry.kind === 'tsx') (await import('tsx/esm/api')).register();
const { main } = await import(pathToFileURL(entry.file).href);
process.exitCode = await main(process.argv);
