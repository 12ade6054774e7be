//! The Lua scripts of [`RedisTasks`](crate::store::RedisTasks): each change to a task is one of
//! them, run alone by Redis on its own clock (`TIME`). Their keys and arguments are
//! `tasks.rs`'s to pass.

/// The Lua helpers every script shares: Redis's clock in ms, the sorted set of the tasks one
/// client counts for (by its share, `share_of`: a task stored before shares has its owner),
/// and the owner's list.
pub(super) const PRELUDE: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local function owner_set(prefix, share)
  return prefix .. ':tasks:owner:' .. redis.sha1hex(share)
end
local function share_of(key)
  return redis.call('HGET', key, 'share') or redis.call('HGET', key, 'owner')
end
local function owner_index(prefix, owner)
  return prefix .. ':tasks:listed:' .. redis.sha1hex(owner)
end
local function terminal(s)
  return s == 'completed' or s == 'failed' or s == 'cancelled'
end
";

/// KEYS[1]: the task. ARGV: prefix, id, owner, per_owner, overall, ttl_ms, poll_ms, lease_ms,
/// max_ttl_ms, share (who the owner counts as). Returns `{1, now, 0}`, `{-2, 0, 0}` (store
/// full), `{-1, 0, 0}` (owner full) or `{-3, stored, held}` (the owner holds its share):
/// `TaskLimits::admit`'s rule, in the same order.
pub(super) const CREATE: &str = r"
local prefix, id, owner = ARGV[1], ARGV[2], ARGV[3]
local ttl, lease, max_ttl = tonumber(ARGV[6]), tonumber(ARGV[8]), tonumber(ARGV[9])
local p, o = tonumber(ARGV[4]), tonumber(ARGV[5])
local all = prefix .. ':tasks:all'
local mine = owner_set(prefix, ARGV[10])
redis.call('ZREMRANGEBYSCORE', prefix .. ':tasks:ended', '-inf', now)
redis.call('ZREMRANGEBYSCORE', all, '-inf', now)
redis.call('ZREMRANGEBYSCORE', mine, '-inf', now)
local stored = redis.call('ZCARD', all)
if stored >= o then return {-2, 0, 0} end
local held = redis.call('ZCARD', mine)
if held >= p then return {-1, 0, 0} end
if held > 0 and not (4 * stored < 3 * o and held * 3 * o < 2 * p * (3 * o - 4 * stored)) then
  return {-3, stored, held}
end
-- Running, it lives its TTL (and a lease, for the runner's last word); ended, one TTL more.
-- Its place in `all` and `mine` is freed when it ends (a hold later) or its result is read.
local until_ms = now + 2 * ttl + lease
redis.call('HSET', KEYS[1], 'owner', owner, 'share', ARGV[10], 'status', 'working',
  'created', now, 'updated', now, 'ttl', ttl, 'poll', ARGV[7], 'lease', now + lease)
redis.call('PEXPIREAT', KEYS[1], until_ms)
redis.call('ZADD', all, until_ms, id)
redis.call('ZADD', mine, until_ms, id)
local keep = 2 * max_ttl + lease
redis.call('PEXPIRE', all, keep)
redis.call('PEXPIRE', mine, keep)
-- The owner's list, by creation: an entry older than any record can live is gone.
local listed = owner_index(prefix, owner)
redis.call('ZREMRANGEBYSCORE', listed, '-inf', now - keep)
redis.call('ZADD', listed, now, id)
redis.call('PEXPIRE', listed, keep)
return {1, now, 0}
";

/// KEYS[1]: the task. ARGV: prefix, id, status, message ('' for none), outcome JSON,
/// required owner ('' for any), '1' to end it only when its lease lapsed, hold_ms, overall,
/// keep_ms (how long the sets live). Returns 0 (no such task of that owner), 1 (found, left
/// as it was) or 2 (ended now). An ended task holds its place a hold at most; past
/// `overall` ended records, the ones expiring first are dropped.
pub(super) const END: &str = r"
local prefix, id = ARGV[1], ARGV[2]
local owner = redis.call('HGET', KEYS[1], 'owner')
if not owner then return 0 end
if ARGV[6] ~= '' and owner ~= ARGV[6] then return 0 end
if terminal(redis.call('HGET', KEYS[1], 'status')) then return 1 end
if ARGV[7] == '1' and tonumber(redis.call('HGET', KEYS[1], 'lease')) > now then return 1 end
redis.call('HSET', KEYS[1], 'status', ARGV[3], 'outcome', ARGV[5], 'updated', now)
if ARGV[4] == '' then
  redis.call('HDEL', KEYS[1], 'message')
else
  redis.call('HSET', KEYS[1], 'message', ARGV[4])
end
local ttl = tonumber(redis.call('HGET', KEYS[1], 'ttl'))
local hold = math.min(tonumber(ARGV[8]), ttl)
redis.call('PEXPIRE', KEYS[1], ttl)
redis.call('ZADD', prefix .. ':tasks:all', now + hold, id)
redis.call('ZADD', owner_set(prefix, share_of(KEYS[1])), now + hold, id)
local ended = prefix .. ':tasks:ended'
redis.call('ZADD', ended, now + ttl, id)
redis.call('PEXPIRE', ended, tonumber(ARGV[10]))
local extra = redis.call('ZCARD', ended) - tonumber(ARGV[9])
if extra > 0 then
  for _, old in ipairs(redis.call('ZRANGE', ended, 0, extra - 1)) do
    local key = prefix .. ':task:' .. old
    local who = redis.call('HGET', key, 'owner')
    if who then
      redis.call('ZREM', owner_set(prefix, share_of(key)), old)
      redis.call('ZREM', owner_index(prefix, who), old)
    end
    redis.call('ZREM', prefix .. ':tasks:all', old)
    redis.call('DEL', key)
  end
  redis.call('ZREMRANGEBYRANK', ended, 0, extra - 1)
end
return 2
";

/// KEYS[1]: the task. ARGV: prefix, id, owner. Frees the place an ended task of that owner
/// holds (its result was read); the record stays. Returns 1 when it did.
pub(super) const RELEASE: &str = r"
local owner = redis.call('HGET', KEYS[1], 'owner')
if not owner or owner ~= ARGV[3] then return 0 end
if not terminal(redis.call('HGET', KEYS[1], 'status')) then return 0 end
redis.call('ZREM', ARGV[1] .. ':tasks:all', ARGV[2])
redis.call('ZREM', owner_set(ARGV[1], share_of(KEYS[1])), ARGV[2])
return 1
";

/// KEYS[1]: unused. ARGV: prefix, owner, the position after which the page starts (created
/// ms and id, both '' for the start), limit, budget (entries looked at, at most). The
/// owner's tasks that still exist, oldest first: `{more, last_created, last_id, ids,
/// hashes}`, `more` 1 when the budget ran out or the page is full before the list's end
/// (the next page starts after `last_*`). Entries whose record is gone are dropped.
pub(super) const LIST: &str = r"
local prefix, owner = ARGV[1], ARGV[2]
local after_score, after_id = ARGV[3], ARGV[4]
local limit, budget = tonumber(ARGV[5]), tonumber(ARGV[6])
local listed = owner_index(prefix, owner)
local min = '-inf'
if after_score ~= '' then min = after_score end
local entries = redis.call('ZRANGEBYSCORE', listed, min, '+inf', 'WITHSCORES', 'LIMIT', 0, budget)
local ids, hashes = {}, {}
local last_score, last_id = '', ''
local more = 0
for i = 1, #entries, 2 do
  local id, score = entries[i], entries[i + 1]
  if not (after_score ~= '' and tonumber(score) == tonumber(after_score) and id <= after_id) then
    if #ids >= limit then
      more = 1
      break
    end
    local key = prefix .. ':task:' .. id
    local fields = redis.call('HGETALL', key)
    if #fields == 0 or redis.call('HGET', key, 'owner') ~= owner then
      redis.call('ZREM', listed, id)
    else
      table.insert(ids, id)
      table.insert(hashes, fields)
    end
    last_score, last_id = score, id
  end
end
if more == 0 and #entries == 2 * budget then more = 1 end
return {more, last_score, last_id, ids, hashes}
";

/// KEYS[1]: the task. ARGV: lease_ms. Returns 1 when the task still runs (lease renewed),
/// 0 when it ended (cancelled, failed by a lapsed lease) or is gone.
pub(super) const RENEW: &str = r"
local s = redis.call('HGET', KEYS[1], 'status')
if not s or terminal(s) then return 0 end
redis.call('HSET', KEYS[1], 'lease', now + tonumber(ARGV[1]))
return 1
";

/// KEYS[1]: the task. ARGV: message. Sets it on a task that still runs.
pub(super) const MESSAGE: &str = r"
local s = redis.call('HGET', KEYS[1], 'status')
if not s or terminal(s) then return 0 end
redis.call('HSET', KEYS[1], 'message', ARGV[1], 'updated', now)
return 1
";

/// KEYS[1]: the task. ARGV: key, request JSON. Sets the question on a task that still runs
/// (`ask:<key>`), which is then `input_required`.
pub(super) const ASK: &str = r"
local s = redis.call('HGET', KEYS[1], 'status')
if not s or terminal(s) then return 0 end
redis.call('HSET', KEYS[1], 'ask:' .. ARGV[1], ARGV[2], 'status', 'input_required', 'updated', now)
return 1
";

/// KEYS[1]: the task. ARGV: owner, then key and answer JSON pairs. Keeps the answers to
/// questions still open (`answer:<key>`), ignores the others; `working` again when none is
/// left open. Returns 0 (no such task of that owner) or 1.
pub(super) const ANSWER: &str = r"
local owner = redis.call('HGET', KEYS[1], 'owner')
if not owner or owner ~= ARGV[1] then return 0 end
if terminal(redis.call('HGET', KEYS[1], 'status')) then return 1 end
for i = 2, #ARGV - 1, 2 do
  if redis.call('HDEL', KEYS[1], 'ask:' .. ARGV[i]) == 1 then
    redis.call('HSET', KEYS[1], 'answer:' .. ARGV[i], ARGV[i + 1])
  end
end
local open = false
for _, field in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(field, 1, 4) == 'ask:' then open = true end
end
if not open and redis.call('HGET', KEYS[1], 'status') == 'input_required' then
  redis.call('HSET', KEYS[1], 'status', 'working', 'updated', now)
end
return 1
";

/// KEYS[1]: the task. ARGV: key. The answer to that question, taken once (nil when none).
pub(super) const TAKE: &str = r"
local v = redis.call('HGET', KEYS[1], 'answer:' .. ARGV[1])
if v then redis.call('HDEL', KEYS[1], 'answer:' .. ARGV[1]) end
return v
";
