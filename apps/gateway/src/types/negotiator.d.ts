// negotiator ships no types (@types/negotiator describes 0.6); the one call the gateway makes.
declare module "negotiator" {
  export default class Negotiator {
    constructor(request: { headers: Record<string, string | undefined> });
    mediaType(available?: string[]): string | undefined;
  }
}
