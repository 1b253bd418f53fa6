// The test provider's gRPC server: tfplugin6 (protocol 6.8, the version Terraform 1.11 ships) plus
// go-plugin's controller and health services. Started by ../main.js.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { decode, encode, type Value } from './msgpack';
import { apply, type Diag, plan, providerSchema, RESOURCE, read, resourceSchema, validate } from './resource';

/** The .proto files: next to this file's folder, or where the bundled launcher says (mirror.ts). */
function protoDir(): string {
  const given = process.env.DRIFTLINE_TESTOBJ_PROTO_DIR;
  if (given) return given;
  return join(dirname(fileURLToPath(import.meta.url)), '..', 'proto');
}

interface DynamicValue {
  msgpack?: Buffer;
  json?: Buffer;
}

function fromDynamic(v: DynamicValue | null | undefined): Value {
  if (!v) return null;
  if (v.msgpack && v.msgpack.length > 0) return decode(v.msgpack);
  if (v.json && v.json.length > 0) return JSON.parse(v.json.toString('utf8')) as Value;
  return null;
}

function toDynamic(v: Value): DynamicValue {
  return { msgpack: encode(v) };
}

type Handler = (call: { request: Record<string, unknown> }, cb: grpc.sendUnaryData<unknown>) => void;

function unary(fn: (req: Record<string, unknown>) => unknown): Handler {
  return (call, cb) => {
    try {
      cb(null, fn(call.request));
    } catch (err) {
      process.stderr.write(
        `${JSON.stringify({ level: 'error', msg: 'testobj provider call failed', err: String(err) })}\n`,
      );
      cb({ code: grpc.status.INTERNAL, message: String(err) } as grpc.ServiceError, null);
    }
  };
}

export interface ProviderServer {
  port: number;
  stop(): void;
}

/** Starts the provider on 127.0.0.1 (an ephemeral port) and answers until Shutdown. */
export async function startProviderServer(onShutdown: () => void): Promise<ProviderServer> {
  const options = { keepCase: true, longs: Number, enums: String, defaults: false, oneofs: true };
  const dir = protoDir();
  const defs = protoLoader.loadSync(
    [join(dir, 'tfplugin6.8.proto'), join(dir, 'goplugin.proto'), join(dir, 'health.proto')],
    { ...options, includeDirs: [dir] },
  );
  // biome-ignore lint/suspicious/noExplicitAny: grpc-js package definitions are untyped without codegen
  const pkg = grpc.loadPackageDefinition(defs) as any;
  let objectsFile = process.env.DRIFTLINE_TESTOBJ_FILE ?? '';
  const diags = (d: Diag[]) => d;
  const capabilities = {
    plan_destroy: false,
    get_provider_schema_optional: false,
    move_resource_state: false,
  };

  const server = new grpc.Server();
  server.addService(pkg.tfplugin6.Provider.service, {
    GetMetadata: unary(() => ({ server_capabilities: capabilities, resources: [{ type_name: RESOURCE }] })),
    GetProviderSchema: unary(() => ({
      provider: providerSchema,
      resource_schemas: { [RESOURCE]: resourceSchema },
      data_source_schemas: {},
      server_capabilities: capabilities,
    })),
    ValidateProviderConfig: unary(() => ({ diagnostics: [] })),
    ValidateResourceConfig: unary((req) => ({
      diagnostics: validate(fromDynamic(req.config as DynamicValue)),
    })),
    UpgradeResourceState: unary((req) => {
      const raw = req.raw_state as { json?: Buffer } | undefined;
      return { upgraded_state: { json: raw?.json ?? Buffer.from('null') }, diagnostics: [] };
    }),
    ConfigureProvider: unary((req) => {
      const config = fromDynamic(req.config as DynamicValue) as { path?: Value } | null;
      if (config && typeof config.path === 'string' && config.path !== '') objectsFile = config.path;
      if (objectsFile !== '') return { diagnostics: [] };
      return {
        diagnostics: diags([
          {
            severity: 'ERROR',
            summary: 'No objects file',
            detail: 'Set `path` in the provider block or the DRIFTLINE_TESTOBJ_FILE environment variable.',
          },
        ]),
      };
    }),
    ReadResource: unary((req) => ({
      new_state: toDynamic(read(objectsFile, fromDynamic(req.current_state as DynamicValue))),
      private: req.private ?? Buffer.alloc(0),
      diagnostics: [],
    })),
    PlanResourceChange: unary((req) => {
      const out = plan(
        fromDynamic(req.prior_state as DynamicValue),
        fromDynamic(req.proposed_new_state as DynamicValue),
      );
      return {
        planned_state: toDynamic(out.planned),
        requires_replace: out.requiresReplace.map((name) => ({ steps: [{ attribute_name: name }] })),
        planned_private: req.prior_private ?? Buffer.alloc(0),
        diagnostics: [],
      };
    }),
    ApplyResourceChange: unary((req) => {
      const out = apply(
        objectsFile,
        fromDynamic(req.prior_state as DynamicValue),
        fromDynamic(req.planned_state as DynamicValue),
      );
      return { new_state: toDynamic(out.state), private: Buffer.alloc(0), diagnostics: out.diagnostics };
    }),
    StopProvider: unary(() => ({ Error: '' })),
  });
  server.addService(pkg.plugin.GRPCController.service, {
    Shutdown: unary(() => {
      setImmediate(onShutdown);
      return {};
    }),
  });
  server.addService(pkg.grpc.health.v1.Health.service, {
    Check: unary(() => ({ status: 'SERVING' })),
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    );
  });
  return { port, stop: () => server.forceShutdown() };
}
