import { describe, expect, it } from 'vitest';
import { ApiError } from '../../api/client';
import { useSectionSave } from './section-save';
import type { SettingsApi, SettingsDoc } from './settings.api';

const t = (key: string) => key;
const apiThat = (patch: (p: Partial<SettingsDoc>) => Promise<SettingsDoc>) => ({ patch }) as unknown as SettingsApi;

describe('useSectionSave', () => {
  it('returns the saved document and marks it saved', async () => {
    const s = useSectionSave(apiThat(async (p) => ({ ...p }) as SettingsDoc), ['hooks'], t);
    expect(await s.save({ hooks: [] })).toEqual({ hooks: [] });
    expect(s.saved.value).toBe(true);
    expect(s.saving.value).toBe(false);
    expect(s.problems.value).toEqual([]);
  });

  it('keeps only the problems of its own sections', async () => {
    const details = [
      { field: 'backends[0].baseURL', message: 'not a URL' },
      { field: 'defaultBackend', message: 'unknown backend' },
      { field: 'hooks[0].name', message: 'not ours' },
    ];
    const s = useSectionSave(apiThat(async () => Promise.reject(new ApiError(400, 'invalid_settings', 'Invalid settings', details))), ['backends', 'defaultBackend'], t);
    expect(await s.save({ backends: [] })).toBeUndefined();
    expect(s.problems.value).toEqual(['backends[0].baseURL: not a URL', 'defaultBackend: unknown backend']);
    expect(s.saved.value).toBe(false);
  });

  it('falls back to the error message when no problem names its sections', async () => {
    const s = useSectionSave(apiThat(async () => Promise.reject(new ApiError(500, 'internal', 'Something broke'))), ['hooks'], t);
    await s.save({ hooks: [] });
    expect(s.problems.value).toHaveLength(1);
    expect(s.problems.value[0]).toBeTruthy();
  });
});
