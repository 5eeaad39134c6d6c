// A small Buffer, inlined into each bundle the way OpenHuman's bundles inline their Buffer polyfill:
// at load it looks for the global object under globalThis, window and global, and installs itself
// on each of them that has no Buffer yet.

const root: any =
  typeof globalThis !== "undefined"
    ? globalThis
    : typeof window !== "undefined"
      ? window
      : typeof global !== "undefined"
        ? global
        : {};

export class Buffer extends Uint8Array {
  // Typed loosely so that it may stand in for Uint8Array.from (a static of the base class).
  static from(value: any, encoding?: any): any {
    if (typeof value === "string") {
      if (encoding === "base64") {
        const binary = atob(value);
        const out = new Buffer(binary.length);
        for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
        return out;
      }
      const bytes = new TextEncoder().encode(value);
      const out = new Buffer(bytes.length);
      out.set(bytes);
      return out;
    }
    const out = new Buffer(value.length);
    out.set(value);
    return out;
  }

  toString(encoding?: "utf8" | "base64"): string {
    if (encoding === "base64") {
      let binary = "";
      for (let i = 0; i < this.length; i++) binary += String.fromCharCode(this[i]);
      return btoa(binary);
    }
    return new TextDecoder().decode(this);
  }
}

if (typeof root.Buffer === "undefined") root.Buffer = Buffer;
if (typeof window !== "undefined" && typeof (window as any).Buffer === "undefined") (window as any).Buffer = Buffer;
if (typeof global !== "undefined" && typeof (global as any).Buffer === "undefined") (global as any).Buffer = Buffer;
