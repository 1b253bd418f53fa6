import { useEffect, useState } from 'preact/hooks';

type Theme = 'system' | 'light' | 'dark';
const NEXT: Record<Theme, Theme> = { system: 'dark', dark: 'light', light: 'system' };
const KEY = 'driftline.theme';

function stored(): Theme {
  try {
    const v = localStorage.getItem(KEY);
    return v === 'light' || v === 'dark' ? v : 'system';
  } catch {
    return 'system';
  }
}

/** Dark mode: follows the system unless the toggle picks light or dark (kept in localStorage). */
export function ThemeToggle() {
  const [theme, setTheme] = useState<Theme>(stored);
  useEffect(() => {
    const root = document.documentElement;
    if (theme === 'system') root.removeAttribute('data-theme');
    else root.setAttribute('data-theme', theme);
    try {
      if (theme === 'system') localStorage.removeItem(KEY);
      else localStorage.setItem(KEY, theme);
    } catch {
      // Private mode without storage: the choice lasts for this page only.
    }
  }, [theme]);
  return (
    <button
      type="button"
      class="theme"
      onClick={() => setTheme(NEXT[theme])}
      aria-label={`Theme: ${theme}. Change theme`}
    >
      {theme === 'dark' ? '☾ dark' : theme === 'light' ? '☀ light' : '◐ system'}
    </button>
  );
}
