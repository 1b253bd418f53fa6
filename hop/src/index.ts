export type { BlobReader, FinishedUpload, HopBackend, Peer } from './ports/HopBackend.js';
