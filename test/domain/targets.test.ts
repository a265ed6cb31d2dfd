import { describe, expect, it } from "vitest";
import { checkTarget } from "../../src/domain/targets";

const strict = { allowPrivate: false };
const permissive = { allowPrivate: true };

describe("checkTarget in a deployment without private targets", () => {
  it.each(["https://api.example.com/charge", "https://pay.example.co.uk:8443/v1?x=1", "https://xn--bcher-kva.example/"])("allows %s", (url) => {
    expect(checkTarget(url, strict)).toBeUndefined();
  });

  it.each([
    { url: "http://api.example.com/charge", reason: "only https URLs may be called (got http:)" },
    { url: "ftp://files.example.com/x", reason: "only https URLs may be called (got ftp:)" },
    { url: "https://user:secret@api.example.com/", reason: "URLs with credentials (userinfo) are refused" },
    { url: "https://token@api.example.com/", reason: "URLs with credentials (userinfo) are refused" },
    { url: "https://127.0.0.1/", reason: "IP literal hosts are refused (127.0.0.1)" },
    { url: "https://169.254.169.254/latest/meta-data", reason: "IP literal hosts are refused (169.254.169.254)" },
    { url: "https://10.0.0.1/", reason: "IP literal hosts are refused (10.0.0.1)" },
    { url: "https://8.8.8.8/", reason: "IP literal hosts are refused (8.8.8.8)" },
    { url: "https://[::1]/", reason: "IP literal hosts are refused ([::1])" },
    { url: "https://[::ffff:7f00:1]/", reason: "IP literal hosts are refused ([::ffff:7f00:1])" },
    { url: "https://2130706433/", reason: "IP literal hosts are refused (127.0.0.1)" },
    { url: "https://0x7f.1/", reason: "IP literal hosts are refused (127.0.0.1)" },
    { url: "https://localhost:8787/", reason: "private host names are refused (localhost)" },
    { url: "https://LOCALHOST/", reason: "private host names are refused (localhost)" },
    { url: "https://api.localhost/", reason: "private host names are refused (api.localhost)" },
    { url: "https://metadata.google.internal/", reason: "private host names are refused (metadata.google.internal)" },
    { url: "https://printer.local/", reason: "private host names are refused (printer.local)" },
    { url: "https://intranet/", reason: "private host names are refused (intranet)" },
    { url: "not a url", reason: '"not a url" is not an absolute URL' },
  ])("refuses $url", ({ url, reason }) => {
    expect(checkTarget(url, strict)).toBe(reason);
  });

  it.each(["https://localhost./", "https://metadata.google.internal./"])("refuses %s, a private name written fully qualified", (url) => {
    expect(checkTarget(url, strict)).toMatch(/^private host names are refused/);
  });
});

describe("checkTarget in a deployment that allows private targets", () => {
  it.each(["http://127.0.0.1:8787/remote", "https://localhost/", "https://[::1]:9000/", "http://10.0.0.1/", "https://db.internal/"])(
    "lets %s through",
    (url) => {
      expect(checkTarget(url, permissive)).toBeUndefined();
    },
  );

  it("still refuses credentials in the URL", () => {
    expect(checkTarget("http://admin:pw@127.0.0.1/", permissive)).toBe("URLs with credentials (userinfo) are refused");
  });

  it("still refuses schemes other than http and https", () => {
    expect(checkTarget("file:///etc/passwd", permissive)).toBe("only https URLs may be called (got file:)");
  });
});
