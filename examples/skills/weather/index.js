// examples/skills/weather/index.js — asks a weather API about a city and remembers the answer.
//
// Input: {"city": "Paris"} (default "Paris"); "api" may name another base URL, which must still be
// allowed by permissions.http.allow in skill.json. The skill calls GET <api>weather?city=<city> through
// openhuman.http, keeps the current conditions in the store under "weather:<city>" and the last five
// cities under "recent", and returns what it found together with what it remembered from last time.

const DEFAULT_API = 'http://127.0.0.1:8787/v1/';

/**
 * @typedef {{ day: string, high_c: number, low_c: number, conditions: string }} Day
 * @typedef {{ city: string, current: { temperature_c: number, conditions: string, wind_kph: number },
 *             forecast: Day[] }} Weather
 */

/** @param {{ city?: unknown, api?: unknown } | null} input */
export default async function run(input) {
  const city = input && typeof input.city === 'string' && input.city.trim() ? input.city.trim() : 'Paris';
  const api = input && typeof input.api === 'string' ? input.api : DEFAULT_API;

  const response = await openhuman.http.get(api + 'weather?city=' + encodeURIComponent(city), {
    responseType: 'json',
    timeoutMs: 3000,
  });
  if (response.status !== 200) {
    throw new Error(`the weather API answered ${response.status} ${response.statusText}`);
  }
  const weather = /** @type {Weather} */ (/** @type {unknown} */ (response.body));

  const key = 'weather:' + weather.city.toLowerCase();
  const previous = store.get(key) ?? null;
  const now = { temperature_c: weather.current.temperature_c, conditions: weather.current.conditions };
  store.set(key, now);

  const before = /** @type {string[]} */ (store.get('recent') ?? []);
  const recent = [weather.city, ...before.filter((c) => c !== weather.city)].slice(0, 5);
  store.set('recent', recent);

  return {
    city: weather.city,
    now,
    forecast: weather.forecast.map((d) => `${d.day}: ${d.low_c} to ${d.high_c} °C, ${d.conditions}`),
    previous,
    recent,
  };
}
