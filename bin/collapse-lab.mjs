#!/usr/bin/env node
// The collapse-lab command: TypeScript sources run through tsx, so `npx collapse-lab …`
// works right after `npm ci`, with no build step.
import { register } from "tsx/esm/api";

register();
await import("../src/cli/main.ts");
