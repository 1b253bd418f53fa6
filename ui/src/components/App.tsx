import { NO_FILTERS } from '../core/route.js';
import { useAuth } from '../hooks/useAuth.js';
import { useResetKey } from '../hooks/useResetKey.js';
import { linkProps, useRoute } from '../hooks/useRoute.js';
import { SessionContext } from '../hooks/useSession.js';
import { LiveAnnouncer } from './LiveAnnouncer.js';
import { SignIn } from './SignIn.js';
import { ThemeToggle } from './ThemeToggle.js';
import { UserMenu } from './UserMenu.js';
import { Views } from './Views.js';

/**
 * The dashboard shell: header, live state, theme, who is signed in, and the view the URL names — or the
 * sign-in page while the hub knows no credential for this browser.
 */
export function App() {
  const [route, go] = useRoute();
  const resetKey = useResetKey();
  const { auth, signIn, signOut, showSignIn, recheck } = useAuth();
  const signedIn = auth.state === 'signed-in';
  const viewLink = (
    view: 'overview' | 'links' | 'needs' | 'publications' | 'audit' | 'drift',
    text: string,
  ) => (
    <a {...linkProps({ view }, go)} aria-current={route.view === view ? 'page' : undefined}>
      {text}
    </a>
  );
  return (
    <>
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="top">
        <a class="brand" {...linkProps({ view: 'overview' }, go)}>
          Driftline
        </a>
        {signedIn ? (
          <nav aria-label="Views" class="crumbs">
            {viewLink('overview', 'Overview')}{' '}
            <a
              {...linkProps({ view: 'matrix', filters: NO_FILTERS, pivot: null }, go)}
              aria-current={route.view === 'matrix' ? 'page' : undefined}
            >
              Matrix
            </a>{' '}
            {viewLink('drift', 'Drift')} {viewLink('links', 'Links')} {viewLink('needs', 'Needs')}{' '}
            {viewLink('publications', 'Publications')} {viewLink('audit', 'Audit')}
          </nav>
        ) : null}
        <span class="spacer" />
        {signedIn ? <LiveAnnouncer /> : null}
        {signedIn ? <UserMenu session={auth.session} onSignOut={signOut} onSignIn={showSignIn} /> : null}
        <ThemeToggle />
      </header>
      <main id="main">
        {auth.state === 'checking' ? <p aria-busy="true">Checking who you are signed in as…</p> : null}
        {auth.state === 'error' ? (
          <p class="error" role="alert">
            Could not ask the hub who you are: {auth.message}{' '}
            <button type="button" onClick={recheck}>
              Try again
            </button>
          </p>
        ) : null}
        {auth.state === 'signed-out' ? <SignIn reason={auth.reason} onSignIn={signIn} /> : null}
        {signedIn ? (
          <SessionContext.Provider value={auth.session}>
            <Views key={resetKey} route={route} go={go} />
          </SessionContext.Provider>
        ) : null}
      </main>
    </>
  );
}
