/** The shell: projects on the left, the current screen in the middle and right, the connection banner on top. */
import { lazy, Suspense, useEffect } from 'react';
import { useTranslation } from 'react-i18next';
import { Banner } from './components/Banner.js';
import { LoadBoundary } from './components/LoadBoundary.js';
import { Sidebar } from './components/Sidebar.js';
import { useLiveFeed } from './components/useLiveFeed.js';
import { BoardScreen } from './screens/BoardScreen.js';
import { useConnection } from './stores/connection.js';
import { useRoute, href } from './stores/route.js';
import styles from './App.module.css';

// The board loads first; the other screens are fetched when first opened.
const KnowledgeScreen = lazy(() => import('./screens/KnowledgeScreen.js').then((m) => ({ default: m.KnowledgeScreen })));
const MetricsScreen = lazy(() => import('./screens/MetricsScreen.js').then((m) => ({ default: m.MetricsScreen })));
const ObserverScreen = lazy(() => import('./screens/ObserverScreen.js').then((m) => ({ default: m.ObserverScreen })));
const DaemonsScreen = lazy(() => import('./screens/DaemonsScreen.js').then((m) => ({ default: m.DaemonsScreen })));
const SettingsScreen = lazy(() => import('./screens/SettingsScreen.js').then((m) => ({ default: m.SettingsScreen })));

export function App() {
  const { t } = useTranslation();
  const route = useRoute((s) => s.route);
  const sync = useRoute((s) => s.sync);
  const unauthorized = useConnection((s) => s.unauthorized);
  useLiveFeed();
  // The first data load starts in main.tsx, before this renders.
  useEffect(() => {
    window.addEventListener('hashchange', sync);
    return () => window.removeEventListener('hashchange', sync);
  }, [sync]);

  let screen;
  switch (route.name) {
    case 'board':
      screen = <BoardScreen taskId={route.taskId} wide={route.wide} />;
      break;
    case 'settings':
      screen = <SettingsScreen />;
      break;
    case 'metrics':
      screen = <MetricsScreen />;
      break;
    case 'daemons':
      screen = <DaemonsScreen />;
      break;
    case 'knowledge':
      screen = <KnowledgeScreen view={route.view} id={route.id} />;
      break;
    case 'observer':
      screen = <ObserverScreen id={route.id} />;
      break;
    default:
      screen = (
        <section className={styles.notFound} role="alert">
          <h2>{t('app.unknownRoute', { path: route.path })}</h2>
          <a href={href({ name: 'board' })}>{t('app.backToBoard')}</a>
        </section>
      );
  }
  if (unauthorized) {
    return (
      <div className={styles.app}>
        <Banner />
        <main className={styles.main} id="main">
          <section className={styles.notFound} role="alert" data-testid="sign-in">
            <h2>{t('app.signInTitle')}</h2>
            <p>{t('app.signIn')}</p>
          </section>
        </main>
      </div>
    );
  }
  return (
    <div className={styles.app}>
      <Banner />
      <div className={styles.columns}>
        <Sidebar />
        <main className={styles.main} id="main">
          {/* Keyed by screen: after one fails to load, another opens as usual. */}
          <LoadBoundary key={route.name}>
            <Suspense fallback={<p style={{ padding: 12 }}>{t('app.loading')}</p>}>{screen}</Suspense>
          </LoadBoundary>
        </main>
      </div>
    </div>
  );
}
