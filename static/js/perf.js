// The page's own phases as User Timing measures ("room:delta", "room:delta:apply", ...), so
// that a profiler or `manage.py pagebench` can say where the main thread's time goes. A
// measure costs about a microsecond; nothing reads them in normal use.
export function timed(name, fn) {
  const start = performance.now();
  try { return fn(); } finally { performance.measure(name, { start }); }
}
