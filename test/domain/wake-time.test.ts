import { describe, expect, it } from "vitest";
import { parseWakeTime } from "../../src/domain/language/wake-time";
import { T0 } from "./builders";

describe("parseWakeTime", () => {
  const times: [string, unknown, number][] = [
    ["epoch milliseconds", T0, T0],
    ["zero, the epoch itself", 0, 0],
    ["the largest safe integer", Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
    ["epoch milliseconds as a string of digits", String(T0), T0],
    ["a string of digits with surrounding spaces", ` ${T0}\n`, T0],
    ["an ISO 8601 date-time in UTC", "2023-11-14T22:13:20Z", T0],
    ["an ISO 8601 date-time with milliseconds", "2023-11-14T22:13:20.250Z", T0 + 250],
    ["an ISO 8601 date-time with an offset", "2023-11-15T00:13:20+02:00", T0],
    ["an ISO 8601 date-time with an offset without colon", "2023-11-14T17:13:20-0500", T0],
    ["an ISO 8601 date-time with a space for the T", "2023-11-14 22:13:20Z", T0],
    ["an ISO 8601 date-time without seconds", "2023-11-14T22:13Z", T0 - 20_000],
    ["an ISO 8601 date alone (midnight UTC)", "2023-11-15", Date.UTC(2023, 10, 15)],
  ];

  it.each(times)("reads %s", (_, value, expected) => {
    expect(parseWakeTime(value)).toBe(expected);
  });

  const notTimes: [string, unknown][] = [
    ["a negative number", -1],
    ["a fraction", T0 + 0.5],
    ["a number past the safe integers", Number.MAX_SAFE_INTEGER + 2],
    ["NaN", Number.NaN],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["more than 16 digits", "12345678901234567"],
    ["a negative number as text", "-1"],
    ["a number with a decimal point as text", "1700000000000.5"],
    ["a date in another format", "11/15/2023"],
    ["a date written out", "Tue, 14 Nov 2023 22:13:20 GMT"],
    ["words", "next tuesday"],
    ["an empty string", ""],
    ["an ISO-shaped string with a month that does not exist", "2023-13-01"],
    ["an ISO-shaped string with an hour that does not exist", "2023-11-14T25:00:00Z"],
    ["a template left unrendered", "{{ input.at }}"],
    ["true", true],
    ["null", null],
    ["undefined", undefined],
    ["an object", { at: T0 }],
    ["a list", [T0]],
  ];

  it.each(notTimes)("refuses %s", (_, value) => {
    expect(parseWakeTime(value)).toBeUndefined();
  });
});
