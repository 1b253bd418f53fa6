import { fromBase64 } from '../bytes.js';

/**
 * The dictionary of hop v2's `dz1` encoding of a push's changes (docs/decisions/510-compact-blob-announcements.md):
 * raw deflate (RFC 1951) with these bytes as its preset dictionary. They are two Automerge changes of the
 * agent's document as its own code writes changed plans (a run entry, its cell, the round's facts), made by
 * `bench/changesDictionary.ts`; a push of a few changed plans repeats most of their bytes but the ids,
 * hashes and times. Frozen: both ends must hold the same bytes (their sha256 is pinned below and by its test); a
 * different sample is a new encoding, never an edit of this one.
 */
export const CHANGES_DICTIONARY_DZ1: Uint8Array = fromBase64(
  'hW9Kg6vFIA8BrQoBQeDPAGaPp9ntnLd6PBWuYBiXPJEZfz1f1Pdc/0GbIaUQAAAAAAAAAAAAAAAAAAAAAAUYjK2b1wYAAAoBAgIF' +
    'FUA0AUICVgdXgQlwBHECcwQEAH4FBAIKfBowMU02QVYzNE04ME0yR0ExODUwTTJHQTE4NQ1wcm9kL2RhdGFiYXNlCnF1ZXVlRGVw' +
    'dGgKcmVwb3J0ZWRBdAQEAXymaoYlFGR7ImNvbXBvbmVudCI6ImRhdGFiYXNlIiwiZGV0YWlsQmxvYiI6IjU1NTU1NTU1NTU1NTU1' +
    'NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTU1NTUiLCJlbnZpcm9ubWVudCI6InByb2QiLCJy' +
    'ZWNvcmRlZEF0IjoxNzkzNTEzMTAwMDAwLCJydW5JZCI6IjAxTTZBVjM0TTgwTTJHQTE4NTBNMkdBMTg1Iiwic3VtbWFyeSI6eyJh' +
    'cHBseWFibGUiOmZhbHNlLCJjb21wbGV0ZSI6dHJ1ZSwiY29tcG9uZW50IjoiZGF0YWJhc2UiLCJjb3VudHMiOnsiYWRkIjowLCJj' +
    'aGFuZ2UiOjAsImRlc3Ryb3kiOjAsImRyaWZ0IjoyLCJpbXBvcnQiOjAsInJlcGxhY2UiOjB9LCJkcmlmdGVkIjpbeyJhZGRyZXNz' +
    'IjoiYXdzX3NlY3VyaXR5X2dyb3VwLndlYiIsImF0dHJpYnV0ZXMiOlsidGFncy5vd25lciJdLCJ0eXBlIjoiYXdzX3NlY3VyaXR5' +
    'X2dyb3VwIn0seyJhZGRyZXNzIjoibW9kdWxlLmRiLmF3c19kYl9pbnN0YW5jZS5tYWluIiwiYXR0cmlidXRlcyI6WyJiYWNrdXBf' +
    'cmV0ZW50aW9uX3BlcmlvZCJdLCJ0eXBlIjoiYXdzX2RiX2luc3RhbmNlIn1dLCJlbnZpcm9ubWVudCI6InByb2QiLCJlcnJvcmVk' +
    'IjpmYWxzZSwiZmluaXNoZWRBdCI6IjIwMjYtMTEtMDFUMDY6MDU6MDAuMDAwWiIsImZvcm1hdFZlcnNpb24iOiIxLjIiLCJvdXRw' +
    'dXRDaGFuZ2VzIjpbXSwicGxhbkhhc2giOiJhMGMwN2FhN2FjZWY1OTY1OWI0M2FjMDQxOTAzODI3MjA0MmM0NmY4ODEzMjg1YzQz' +
    'OWQwNDkxZjY2NTY4NzNlIiwicmVkYWN0aW9uUG9saWN5IjoiMiIsInN0YXJ0ZWRBdCI6IjIwMjYtMTEtMDFUMDY6MDQ6NDAuMDAw' +
    'WiIsInN0YXR1cyI6ImRyaWZ0IiwidGVycmFmb3JtVmVyc2lvbiI6IjEuOS44In19eyJjb21wb25lbnQiOiJkYXRhYmFzZSIsImNv' +
    'bmZpcm1hdGlvbnMiOjAsImNvdW50cyI6eyJhZGQiOjAsImNoYW5nZSI6MCwiZGVzdHJveSI6MCwiZHJpZnQiOjIsImltcG9ydCI6' +
    'MCwicmVwbGFjZSI6MH0sImVudmlyb25tZW50IjoicHJvZCIsInBsYW5IYXNoIjoiYTBjMDdhYTdhY2VmNTk2NTliNDNhYzA0MTkw' +
    'MzgyNzIwNDJjNDZmODgxMzI4NWM0MzlkMDQ5MWY2NjU2ODczZSIsInBsYW5uZWRBdCI6MTc5MzUxMzEwMDAwMCwicnVuSWQiOiIw' +
    'MU02QVYzNE04ME0yR0ExODUwTTJHQTE4NSIsInN0YXR1cyI6ImRyaWZ0In0B4NLJrZk0fwADAQMAfRV4AYVvSoPzxpskAfQIAavF' +
    'IA8HfL4mPMzIHxc476I16Y2qcJVzSXKbn/4OVuaIEAAAAAAAAAAAAAAAAAAAAAAGHMitm9cGAAAKAQICBRU/NAFCAlYHV8kHcARx' +
    'AnMEBAB+BQQCCnwaMDFNNkFWMzVLRzBSMzBDMUc2MFIzMEMxRzYMcHJvZC9uZXR3b3JrCnF1ZXVlRGVwdGgKcmVwb3J0ZWRBdAQE' +
    'AXyWU5YlFGR7ImNvbXBvbmVudCI6Im5ldHdvcmsiLCJkZXRhaWxCbG9iIjoiNjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2' +
    'NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NjY2NiIsImVudmlyb25tZW50IjoicHJvZCIsInJlY29yZGVkQXQiOjE3OTM1' +
    'MTMxNjAwMDAsInJ1bklkIjoiMDFNNkFWMzVLRzBSMzBDMUc2MFIzMEMxRzYiLCJzdW1tYXJ5Ijp7ImFwcGx5YWJsZSI6dHJ1ZSwi' +
    'Y29tcGxldGUiOnRydWUsImNvbXBvbmVudCI6Im5ldHdvcmsiLCJjb3VudHMiOnsiYWRkIjozLCJjaGFuZ2UiOjIsImRlc3Ryb3ki' +
    'OjEsImRyaWZ0IjowLCJpbXBvcnQiOjAsInJlcGxhY2UiOjF9LCJlbnZpcm9ubWVudCI6InByb2QiLCJlcnJvcmVkIjpmYWxzZSwi' +
    'ZmluaXNoZWRBdCI6IjIwMjYtMTEtMDFUMDY6MDY6MDAuMDAwWiIsImZvcm1hdFZlcnNpb24iOiIxLjIiLCJvdXRwdXRDaGFuZ2Vz' +
    'IjpbImRiX3Bhc3N3b3JkIiwid2ViX2luc3RhbmNlX2lkcyJdLCJwbGFuSGFzaCI6IjM5YzJhOTE0MzlkZGE0NWMzNWYzZmExMzhi' +
    'NjRmMTRlYzJjZDE5MTFmYWUxMjQ4MzM0NTI1MDNkNzk1MGNlN2EiLCJyZWRhY3Rpb25Qb2xpY3kiOiIyIiwic3RhcnRlZEF0Ijoi' +
    'MjAyNi0xMS0wMVQwNjowNTo0MC4wMDBaIiwic3RhdHVzIjoiY2hhbmdlcyIsInRlcnJhZm9ybVZlcnNpb24iOiIxLjkuOCJ9fXsi' +
    'Y29tcG9uZW50IjoibmV0d29yayIsImNvbmZpcm1hdGlvbnMiOjAsImNvdW50cyI6eyJhZGQiOjMsImNoYW5nZSI6MiwiZGVzdHJv' +
    'eSI6MSwiZHJpZnQiOjAsImltcG9ydCI6MCwicmVwbGFjZSI6MX0sImVudmlyb25tZW50IjoicHJvZCIsInBsYW5IYXNoIjoiMzlj' +
    'MmE5MTQzOWRkYTQ1YzM1ZjNmYTEzOGI2NGYxNGVjMmNkMTkxMWZhZTEyNDgzMzQ1MjUwM2Q3OTUwY2U3YSIsInBsYW5uZWRBdCI6' +
    'MTc5MzUxMzE2MDAwMCwicnVuSWQiOiIwMU02QVYzNUtHMFIzMEMxRzYwUjMwQzFHNiIsInN0YXR1cyI6ImNoYW5nZXMifQLAp82t' +
    'mTR/AAMBAwB9BxMB',
);

/** sha256 of {@link CHANGES_DICTIONARY_DZ1}, as its test pins it. */
export const CHANGES_DICTIONARY_DZ1_SHA256 =
  'abd2fc29a6e90ea232b150629012efe43217e96d0e1f7b882e9cf9b6689a36d5';
