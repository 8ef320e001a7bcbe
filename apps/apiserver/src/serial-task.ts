/**
 * Runs an async job one at a time: a request while it runs makes it run once more afterwards, so
 * bursts of triggers coalesce and no trigger is lost. For the apiserver's level-triggered loops.
 */
export function serialTask(job: () => Promise<void>, onError: (e: unknown) => void): () => void {
  let running = false;
  let again = false;
  const run = (): void => {
    if (running) {
      again = true;
      return;
    }
    running = true;
    job()
      .catch(onError)
      .finally(() => {
        running = false;
        if (again) {
          again = false;
          run();
        }
      });
  };
  return run;
}
