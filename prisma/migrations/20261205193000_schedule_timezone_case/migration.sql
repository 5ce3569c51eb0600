-- Time zone names were stored as typed ('europe/london'); the API now stores
-- the IANA database's own spelling (packages/core canonicalTimezone). This
-- gives schedules saved before the same spelling, from the server's own zone
-- names: only the case changes, so a link stays itself (Asia/Kolkata is not
-- turned into Asia/Calcutta) and the zone, and so every occurrence, is the
-- same. schedules is small (one row per schedule), so one statement.
UPDATE "schedules" s SET timezone = n.name
FROM pg_timezone_names n
WHERE lower(n.name) = lower(s.timezone) AND n.name <> s.timezone;
