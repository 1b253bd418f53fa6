import {
  BATCH_CONTENT_TYPE,
  CURSOR_HEADER,
  DownlinkQuerySchema,
  SignInQuerySchema,
  wire2,
} from '@driftline/protocol';
import {
  err,
  header,
  json,
  pathParam,
  queryParams,
  raw,
  ref,
  retryLater,
  unauthorized,
} from './openapiShared.js';

const binary = { type: 'string', format: 'binary' };
const peer = { tags: ['hop'], security: [{ peer: [] }], 'x-driftline-role': 'peer' };
const open = { security: [], 'x-driftline-role': 'open' };
const peerRefusals = {
  '401': unauthorized('no or unknown peer token'),
  '403': err('the peer does not act for that site'),
};
const tusHeaders = [header('Tus-Resumable', 'tus protocol version: 1.0.0')];
const sha256 = { type: 'string', pattern: '^[0-9a-f]{64}$' };
const uploadId = pathParam('uploadId', 'as the Location of the creation said', {
  type: 'string',
  pattern: '^[A-Za-z0-9_-]{1,128}$',
});

/**
 * The hop API (`/v1/…`, docs/architecture.md#wire) as the hub serves it (who may call each Koa route, and its security,
 * come from hop's route table: `openapi.ts`), `/metrics`, and the dashboard's files with
 * the sign-in link. tus (https://tus.io/protocols/resumable-upload, 1.0.0: creation, termination,
 * expiration) is served beside Koa at `/v1/uploads`.
 */
export function hopPaths(): Record<string, Record<string, object>> {
  return {
    '/v1/bundles': {
      post: {
        tags: ['hop'],
        summary: 'Hand over a batch of signed bundles; one receipt per bundle, each after its commit',
        parameters: [header('Content-Encoding', 'br or gzip, or none')],
        requestBody: {
          required: true,
          content: {
            [BATCH_CONTENT_TYPE]: { schema: binary },
            'application/octet-stream': { schema: binary },
          },
        },
        responses: {
          '200': json('ReceiptsResponse', 'receipts, in the order of the batch'),
          '400': err('not a batch, or a bundle that does not decode'),
          ...peerRefusals,
          '413': err('over the batch size, compressed or inflated'),
          '415': err('not a Driftline batch'),
          '429': retryLater('too many connections or too much from this peer'),
          '503': retryLater('not ready'),
          '507': err('out of disk'),
        },
      },
      get: {
        tags: ['hop'],
        summary: 'The downlink of a site (acks, plan requests, publication manifests) after a cursor',
        parameters: [
          header('Accept-Encoding', 'br: compress a batch over 1 KiB'),
          header('If-None-Match', '`"<after>"`: 304 when nothing came since that cursor (decision 320)'),
          ...queryParams(DownlinkQuerySchema),
        ],
        responses: {
          '200': {
            ...raw(BATCH_CONTENT_TYPE, 'a batch of bundles', binary),
            headers: { [CURSOR_HEADER]: { description: 'send back as `after`', schema: { type: 'string' } } },
          },
          '304': { description: 'nothing since the cursor named in If-None-Match' },
          '400': err('bad query'),
          ...peerRefusals,
        },
      },
    },
    '/v1/blobs/{sha256}': {
      get: {
        tags: ['hop'],
        summary: 'A blob by content hash, with Range and If-Range (strong ETag)',
        parameters: [
          pathParam('sha256', 'lowercase hex', sha256),
          header('Range', 'bytes=<first>-[<last>]'),
          header('If-Range', 'the ETag the earlier ranges came from'),
          header('If-None-Match', 'an ETag: 304 when it is current'),
        ],
        responses: {
          '200': raw('application/octet-stream', 'the blob', binary),
          '206': raw('application/octet-stream', 'the range asked for', binary),
          '304': { description: 'not modified' },
          '400': err('not a sha256'),
          '401': unauthorized('no or unknown peer token'),
          '404': err('no complete blob with that hash'),
          '416': err('the range is outside the blob'),
        },
      },
    },
    '/v1/uploads': {
      post: {
        ...peer,
        summary: 'tus creation: Upload-Length and Upload-Metadata (with sha256) required',
        parameters: [
          ...tusHeaders,
          header('Upload-Length', 'size of the whole blob, bytes'),
          header('Upload-Metadata', 'tus metadata; sha256 of the whole blob is required'),
        ],
        responses: {
          '201': { description: 'created; Location names the upload' },
          '400': err('a tus header is missing or wrong'),
          '401': unauthorized('no or unknown peer token'),
          '413': err('over the largest upload'),
          '429': retryLater('over this peer’s share of in-progress uploads'),
          '507': err('out of disk'),
        },
      },
      options: {
        tags: ['hop'],
        ...open,
        summary: 'tus discovery: versions, extensions, largest upload',
        responses: { '204': { description: 'Tus-Version, Tus-Extension, Tus-Max-Size' } },
      },
    },
    '/v1/uploads/{uploadId}': {
      head: {
        ...peer,
        summary: 'tus: the offset to resume from',
        parameters: [uploadId, ...tusHeaders],
        responses: {
          '200': { description: 'Upload-Offset and Upload-Length' },
          '401': unauthorized('no or unknown peer token'),
          '404': err('no such upload for this peer'),
          '410': err('expired'),
        },
      },
      patch: {
        ...peer,
        summary: 'tus: bytes from Upload-Offset; the last one checks the sha256 and records the blob',
        parameters: [uploadId, ...tusHeaders, header('Upload-Offset', 'where these bytes start')],
        requestBody: { required: true, content: { 'application/offset+octet-stream': { schema: binary } } },
        responses: {
          '204': { description: 'stored; Upload-Offset is the new offset' },
          '401': unauthorized('no or unknown peer token'),
          '404': err('no such upload for this peer'),
          '409': err('Upload-Offset is not the current offset'),
          '460': err('the bytes do not hash to the announced sha256; the upload is gone'),
        },
      },
      delete: {
        ...peer,
        summary: 'tus termination',
        parameters: [uploadId, ...tusHeaders],
        responses: {
          '204': { description: 'deleted' },
          '401': unauthorized('no or unknown peer token'),
          '404': err('no such upload for this peer'),
        },
      },
      options: {
        tags: ['hop'],
        ...open,
        summary: 'tus discovery',
        parameters: [uploadId],
        responses: { '204': { description: 'Tus-Version, Tus-Extension, Tus-Max-Size' } },
      },
    },
    '/v1/peer': {
      get: {
        tags: ['hop'],
        summary: 'Who the bearer token is here and the sites it acts for (a relay learns its sites from it)',
        responses: { '200': json('PeerInfo', 'the peer'), '401': unauthorized('no or unknown peer token') },
      },
    },
    '/v1/peer/wire2': {
      post: {
        tags: ['hop'],
        summary:
          'Hop v2 (decision 495): an agent registers its enrolled key with its token; from then on its signed messages go to /v2',
        parameters: [
          header(
            'driftline-h2c',
            '1: the agent can carry /v2 on h2c; the answer then says `h2c: true` where this port serves it (issue 46)',
          ),
        ],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: ref('Wire2Registration') } },
        },
        responses: {
          '200': json('Wire2Info', 'this node speaks v2: the short ids and how it holds pulls'),
          '400': err('not {site, agent, publicKey}'),
          '401': unauthorized('no or unknown peer token'),
          '403': err('not the key enrolled for that agent, or a site the token does not act for'),
          '404': err('an agent not enrolled here'),
        },
      },
    },
    '/v2': {
      post: {
        tags: ['hop'],
        summary:
          'One hop v2 message (decision 490), signed by its sender: a push (answered with the signed custody) or a pull (answered [cursor, items] or 204)',
        requestBody: { required: true, content: { [wire2.WIRE2_CONTENT_TYPE]: { schema: binary } } },
        responses: {
          '200': {
            description:
              'a custody message, or a pull answer [cursor, items, refusals?] (CBOR, brotli with Content-Encoding: br); no Content-Type is sent',
          },
          '204': { description: 'a pull with nothing due (after its hold)' },
          '400': err('not a v2 message, or a kind this node does not take'),
          '401': unauthorized('no key is registered for the sender, or its token was revoked'),
          '409': err('a sequence already taken, or too old'),
          '413': err('over the message limit'),
        },
      },
    },
    '/v1/status': {
      post: {
        tags: ['hop'],
        summary:
          "A relay's own health (refusals by reason, sites refused, custody); the latest is kept per peer. The answer says who the token is here, as GET /v1/peer does (decision 610)",
        requestBody: { required: true, content: { 'application/json': { schema: ref('RelayStatus') } } },
        responses: {
          '200': json('PeerInfo', 'kept; who the token is here and the sites it acts for'),
          '400': err('not a relay status'),
          '401': unauthorized('no or unknown peer token'),
          '413': err('over 64 KiB'),
          '415': err('not JSON'),
        },
      },
    },
    '/v1/downlink/watch': {
      post: {
        tags: ['hop'],
        summary:
          "One held request for all of a relay's sites (decision 620): the sites with downlink after the cursor named, at once or when the first arrives within wait (at most watchS of GET /v1/peer)",
        requestBody: { required: true, content: { 'application/json': { schema: ref('DownlinkWatch') } } },
        responses: {
          '200': json('DownlinkWatchAnswer', 'the sites to pull (none: the hold ended), and those refused'),
          '400': err('not a watch'),
          '401': unauthorized('no or unknown peer token, or revoked while it was held'),
          '413': err('over 2 MiB'),
          '415': err('not JSON'),
        },
      },
    },
    '/v1/health': {
      get: {
        tags: ['hop'],
        summary: 'Whether this hub is ready; on both listeners',
        responses: {
          '200': json('Health', 'ready'),
          '503': { ...retryLater('not ready'), content: json('Health', 'not ready').content },
        },
      },
    },
    '/metrics': {
      get: {
        tags: ['api'],
        summary: 'Prometheus metrics (text exposition format); on the api listener when it is apart',
        responses: {
          '200': raw('text/plain; version=0.0.4', 'metrics'),
          '404': err('asked on the hop listener while listen.api is apart'),
        },
      },
    },
    '/': {
      get: {
        tags: ['api'],
        ...open,
        summary:
          'The dashboard (index.html; a short text page when it is not built). With ?token= it is the sign-in ' +
          'link: a session cookie and 303 to /, the token gone from the address (or 303 to /?signin=failed)',
        parameters: queryParams(SignInQuerySchema),
        responses: {
          '200': {
            description: 'the dashboard',
            content: {
              'text/html': { schema: { type: 'string' } },
              'text/plain': { schema: { type: 'string' } },
            },
          },
          '303': { description: 'after a sign-in link: Location / (signed in) or /?signin=failed' },
          '304': { description: 'not modified' },
        },
      },
    },
    '/assets/{file}': {
      get: {
        tags: ['api'],
        ...open,
        summary:
          'A file of the built dashboard. Any other path outside /api, /v1 and /metrics that names no file ' +
          'answers index.html (client-side routes)',
        parameters: [pathParam('file')],
        responses: {
          '200': raw('application/octet-stream', 'the file, typed by its extension', binary),
          '304': { description: 'not modified' },
          '404': err('the dashboard is not built'),
        },
      },
    },
  };
}
