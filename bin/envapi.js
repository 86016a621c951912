#!/usr/bin/env node
// The `envapi` command: registers tsx so the TypeScript sources run as they are, then runs the CLI
// (server/cli/index.ts).
import { register } from 'tsx/esm/api';

register();
const { runCli } = await import('../server/cli/index.ts');
await runCli();
