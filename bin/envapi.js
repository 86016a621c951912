#!/usr/bin/env node
// The `envapi` command: registers tsx so the TypeScript sources run as they are, then runs the CLI.
import { register } from 'tsx/esm/api';

register();
await import('../server/cli.ts');
