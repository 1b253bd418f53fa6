// The test provider's entry point: go-plugin's handshake, then the gRPC server (lib/server.ts).
// Terraform starts it with TF_PLUGIN_MAGIC_COOKIE set and reads one line from stdout:
// CORE-PROTOCOL-VERSION|APP-PROTOCOL-VERSION|NETWORK|ADDRESS|PROTOCOL.
import { startProviderServer } from './lib/server';

const MAGIC_COOKIE = 'd602bf8f470bc67ca7faa0386276bbdd4330efaf76d1a219cb4d6991ca9872b2';

if (process.env.TF_PLUGIN_MAGIC_COOKIE !== MAGIC_COOKIE) {
  process.stderr.write(
    'This binary is a plugin (the Driftline test provider). It is not meant to be run directly:\n' +
      'Terraform starts it. Put it in a filesystem mirror (simulation/provider/mirror.ts) and run terraform.\n',
  );
  process.exit(1);
}
if (process.env.PLUGIN_CLIENT_CERT && process.env.TF_DISABLE_PLUGIN_TLS !== '1') {
  process.stderr.write(
    'The Driftline test provider speaks plain gRPC on 127.0.0.1 only: run terraform with TF_DISABLE_PLUGIN_TLS=1.\n',
  );
  process.exit(1);
}
const versions = (process.env.PLUGIN_PROTOCOL_VERSIONS ?? '6').split(',');
if (!versions.includes('6')) {
  process.stderr.write(
    `The Driftline test provider speaks plugin protocol 6; terraform offered ${versions.join(',')}.\n`,
  );
  process.exit(1);
}

// No top-level await: mirror.ts bundles this file as CommonJS for a fast start (no tsx per launch).
startProviderServer(() => process.exit(0)).then(
  (server) => process.stdout.write(`1|6|tcp|127.0.0.1:${server.port}|grpc\n`),
  (err: unknown) => {
    process.stderr.write(`The Driftline test provider could not start: ${String(err)}\n`);
    process.exit(1);
  },
);
