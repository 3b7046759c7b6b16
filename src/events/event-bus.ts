/**
 * A typed event emitter. A listener that throws is reported to `onListenerError` and never reaches
 * the emitting pipeline: a metrics bug must not fail a delivery.
 */
export type EventMapOf<M> = { readonly [K in keyof M]: object };

export class EventBus<M extends EventMapOf<M>> {
  private readonly listeners = new Map<keyof M, Set<(event: never) => void>>();

  constructor(private readonly onListenerError: (err: unknown, name: keyof M) => void = () => {}) {}

  /** Subscribes; returns the function that unsubscribes. */
  on<K extends keyof M>(name: K, listener: (event: M[K]) => void): () => void {
    let set = this.listeners.get(name);
    if (!set) this.listeners.set(name, (set = new Set()));
    set.add(listener as (event: never) => void);
    return () => set.delete(listener as (event: never) => void);
  }

  emit<K extends keyof M>(name: K, event: M[K]): void {
    const set = this.listeners.get(name);
    if (!set) return;
    for (const listener of set) {
      try {
        (listener as (event: M[K]) => void)(event);
      } catch (err) {
        this.onListenerError(err, name);
      }
    }
  }
}
