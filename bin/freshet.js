#!/usr/bin/env node
// The `freshet` command: runs the compiled CLI (built by `npm install` through the `prepare` script).
import('../dist/cli/main.js').catch((err) => {
  if (err && err.code === 'ERR_MODULE_NOT_FOUND') {
    console.error('freshet: dist/ is missing; run `npm install` (it builds) or `npm run build` first');
    process.exit(1);
  }
  throw err;
});
