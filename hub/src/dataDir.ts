import { join } from 'node:path';

/** Where the hub keeps each file under its data directory (one module, so adapters need not import app.ts). */
export const storePath = (dataDir: string) => join(dataDir, 'hub.db');
export const keyPath = (dataDir: string) => join(dataDir, 'hub-key.pem');
/** The file keeps its name from before decision 170, so hubs in the field keep their publications. */
export const publicationStorePath = (dataDir: string) => join(dataDir, 'bundles.db');
/** Drift episodes and waivers (decision 421), apart from the hub store. */
export const driftStorePath = (dataDir: string) => join(dataDir, 'drift.db');
export const csrfKeyPath = (dataDir: string) => join(dataDir, 'csrf-key');
