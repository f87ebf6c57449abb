/**
 * The daemons sharing this database (`#/daemons`, GET /api/daemons): name, host, home, version, start, last heard
 * and runs in flight, and the settings that differ from the answering daemon's, as `maestro daemons` lists them.
 * Names, hosts and homes are any daemon's (anyone with the database can write them): shown on one line, with hidden
 * characters made visible; the daemon cuts them at their limits. Ages are by the database's clock; a skew of this
 * daemon's clock from it is said only when it is seconds.
 */
import { useEffect } from 'react';
import type { TFunction } from 'i18next';
import { useTranslation } from 'react-i18next';
import { CLOCK_SKEW_WORTH_SAYING_MS, settingText, type DaemonEntry, type DaemonList, type DaemonSettings } from '../api/types.js';
import { oneLine } from '../components/hiddenChars.js';
import { useDaemons } from '../stores/daemons.js';
import styles from './Screens.module.css';

/** A heartbeat is no event of the feed: the list is read again this often while the screen is open. */
const REFRESH_MS = 10_000;

/** A setting as the CLI says it: durations in seconds, the rest as written, on one line. */
function shown(key: keyof DaemonSettings, value: DaemonSettings[keyof DaemonSettings]): string {
  return oneLine(settingText(key, value));
}

/** What a daemon's settings say beside the answering one's: which differ, or why they are not known. */
function settingsNote(t: TFunction, d: DaemonEntry, list: DaemonList): string | null {
  if (d.unreadable) return t('daemons.unreadable', { why: oneLine(d.unreadable) });
  if (!d.settings) return t('daemons.notKnown');
  if (!d.differs.length) return null;
  const self = oneLine(list.self);
  return t('daemons.differs', { self, list: d.differs.map((k) => `${k} ${shown(k, d.settings![k])} (${self}: ${shown(k, list.settings[k])})`).join(', ') });
}

export function DaemonsScreen() {
  const { t, i18n } = useTranslation();
  const { list, error, load } = useDaemons();
  useEffect(() => {
    void load();
    const timer = setInterval(() => void load(), REFRESH_MS);
    return () => clearInterval(timer);
  }, [load]);
  const skew = list?.clockSkewMs ?? null;
  return (
    <section className={styles.page} aria-labelledby="daemons-h">
      <h2 id="daemons-h">{t('daemons.title')}</h2>
      {error && (
        <p role="alert" className={styles.error}>
          {t('daemons.loadFailed', { message: error })}
        </p>
      )}
      {!list && !error && <p className={styles.muted}>{t('app.loading')}</p>}
      {list && (
        <>
          <p className={styles.muted}>{t('daemons.intro')}</p>
          {skew !== null && Math.abs(skew) >= CLOCK_SKEW_WORTH_SAYING_MS && (
            <p className={styles.muted} data-testid="clock-skew">
              {t(skew > 0 ? 'daemons.skewAhead' : 'daemons.skewBehind', { self: oneLine(list.self), seconds: Math.round(Math.abs(skew) / 1000) })}
            </p>
          )}
          <table aria-labelledby="daemons-h" data-testid="daemons">
            <thead>
              <tr>
                <th>{t('daemons.name')}</th>
                <th>{t('daemons.state')}</th>
                <th>{t('daemons.host')}</th>
                <th>{t('daemons.version')}</th>
                <th>{t('daemons.lastHeard')}</th>
                <th>{t('daemons.runsInFlight')}</th>
                <th>{t('daemons.started')}</th>
              </tr>
            </thead>
            <tbody>
              {list.daemons.map((d) => (
                <tr key={d.name}>
                  <th scope="row" className={styles.nameBesideFigures} title={oneLine(d.home)}>
                    {oneLine(d.name)}
                    {d.self && <span className={styles.badge}> {t('daemons.thisOne')}</span>}
                  </th>
                  <td className={d.state === 'stale' ? styles.error : undefined}>{t(`daemons.${d.state}`)}</td>
                  <td>{oneLine(d.host)}</td>
                  <td>{d.settings ? oneLine(d.settings.version) : '?'}</td>
                  <td className={styles.figure}>{t('daemons.heardAgo', { seconds: Math.round(d.lastHeardMsAgo / 1000) })}</td>
                  <td className={styles.figure}>{d.runsInFlight}</td>
                  <td className={styles.figure}>{new Date(d.startedAt).toLocaleString(i18n.language)}</td>
                </tr>
              ))}
            </tbody>
          </table>
          <ul aria-label={t('daemons.settingsTitle')}>
            {list.daemons.flatMap((d) => {
              const note = settingsNote(t, d, list);
              return note ? [<li key={d.name}>{`${oneLine(d.name)}: ${note}`}</li>] : [];
            })}
            {list.daemons.some((d) => d.state === 'stale') && <li>{t('daemons.staleNote')}</li>}
          </ul>
        </>
      )}
    </section>
  );
}
