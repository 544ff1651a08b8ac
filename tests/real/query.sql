-- The SQLite workload (tests/host/data-exact.sh): a table built by a
-- recursive query, an index, a scan with LIKE, a sort and a grouping.
CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c REAL);
WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 200)
INSERT INTO t SELECT x, printf('row%05d', (x * 7919) % 211), x * 1.5 FROM n;
CREATE INDEX tb ON t(b);
SELECT count(*), sum(c), min(b), max(b) FROM t WHERE b LIKE 'row001%';
SELECT b FROM t ORDER BY b DESC LIMIT 3;
SELECT a % 7, count(*), avg(c) FROM t GROUP BY a % 7 ORDER BY 1;
