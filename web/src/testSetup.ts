import { cleanup } from '@testing-library/react';
import { afterEach, beforeEach } from 'vitest';
import i18n from './i18n/index.js';

beforeEach(async () => {
  localStorage.clear();
  await i18n.changeLanguage('en');
});
afterEach(() => cleanup());
