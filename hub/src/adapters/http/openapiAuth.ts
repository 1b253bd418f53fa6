/**
 * Security schemes: an operator token or the dashboard's session cookie on the people's side; a peer
 * token on the hop API.
 */
export const SECURITY_SCHEMES = {
  bearer: { type: 'http', scheme: 'bearer', description: 'An operator token from `hub user add`' },
  cookie: {
    type: 'apiKey',
    in: 'cookie',
    name: 'driftline_session',
    description:
      'Set by sign-in; writes also send header X-Driftline-CSRF with the value GET /api/session gives',
  },
  peer: {
    type: 'http',
    scheme: 'bearer',
    description: 'A peer token from `hub peer` (a relay, or an agent talking to the hub directly)',
  },
};
