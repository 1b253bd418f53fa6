import { configure } from '@testing-library/preact';

// `findBy…` and `waitFor` wait up to 15 s for what the page shows next (testing-library's default is 1 s):
// beside a whole run on two cores, signing an approval with WebCrypto and rendering its answer took
// longer than 1 s once. A wait for an event, not a speed check; tests that assert absence query at once.
configure({ asyncUtilTimeout: 15_000 });
