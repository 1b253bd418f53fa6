import { fakeTerraform } from './terraform/fakeTerraformMain.js';

// The fake terraform program (`simulation/bin/terraform`); what it does is `fakeTerraform`'s doc.
const o = await fakeTerraform(process.argv.slice(2), process.env, process.cwd());
process.stdout.write(o.stdout);
process.stderr.write(o.stderr);
// exitCode rather than exit(): a large plan JSON on a pipe must be flushed completely first.
process.exitCode = o.exitCode;
