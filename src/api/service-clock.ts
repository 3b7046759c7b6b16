/**
 * The service's clock as its answers show it (the HTTP `Date` header), against ours. The service
 * stamps parcels with its own time: a search by creation time (the reconciliation of an upload
 * whose outcome is unknown) must be put in the service's time, or a service clock behind ours
 * hides the very parcel searched for. Retention, which deletes by age, holds back while ours is far
 * from it (src/daemon/retention-pass.ts). Shared by the REST and the SOAP client.
 */
export class ServiceClock {
  private offset: number | undefined;

  constructor(private readonly now: () => number = Date.now) {}

  /** Takes the `Date` header of an answer received just now; a missing or unreadable one changes nothing. */
  note(header: string | string[] | undefined): void {
    const text = Array.isArray(header) ? header[0] : header;
    if (!text) return;
    const at = Date.parse(text);
    if (Number.isFinite(at)) this.offset = at - this.now();
  }

  /** The service's clock minus ours as of the last dated answer (to within a second and the network's delay); undefined before one. */
  offsetMs(): number | undefined {
    return this.offset;
  }
}
