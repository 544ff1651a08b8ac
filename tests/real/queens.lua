-- N-queens: count every placement of N non-attacking queens on an N x N
-- board by backtracking (the paper's "li" benchmark solved n-queens in a
-- Lisp interpreter; here the interpreter is Lua).
-- usage: lua queens.lua [N [REPEAT]]   (defaults 12 and 2: about 1 s natively)
local n = tonumber(arg and arg[1]) or 12
local reps = tonumber(arg and arg[2]) or 2

local cols, diag1, diag2 = {}, {}, {}

local function place(row)
	if row > n then
		return 1
	end
	local count = 0
	for c = 1, n do
		local d1, d2 = row + c, row - c + n
		if not cols[c] and not diag1[d1] and not diag2[d2] then
			cols[c], diag1[d1], diag2[d2] = true, true, true
			count = count + place(row + 1)
			cols[c], diag1[d1], diag2[d2] = false, false, false
		end
	end
	return count
end

-- One string-keyed table traversal, so the hash seed matters to the trace.
local names = {}
for i = 1, 64 do names["q" .. i] = i end
local sum = 0
for k, v in pairs(names) do sum = sum + v end

local total = 0
for _ = 1, reps do total = total + place(1) end
print(string.format("queens(%d) x %d = %d (check %d)", n, reps, total, sum))
