import { cleanup, configure } from '@testing-library/react';
import { afterEach, beforeEach } from 'vitest';
import i18n from './i18n/index.js';

// `waitFor` and `findBy*` give up after 1 s by default: too tight on a loaded machine. The factor
// comes from vite.config.ts (test/helpers/budget.ts: MAESTRO_TEST_SLOW, else the load per core).
configure({ asyncUtilTimeout: Math.round(5000 * (Number(import.meta.env.MAESTRO_TEST_SLOW) || 1)) });

beforeEach(async () => {
  localStorage.clear();
  await i18n.changeLanguage('en');
});
afterEach(() => cleanup());
