/// The part of the store's history that no round needs to look at: the engine's own writes
/// (the rows a pull, a join or a push's end took in) and what a push's scan sent.
///
/// The store's change feed tells the engine of every commit to the file, its own included.
/// A commit whose history is all quiet wakes no round. Without this, each page a pull took
/// woke one more round, which pulled nothing and pushed nothing: half the rounds of a
/// desktop that follows others.
///
/// It errs on the side of a round: a write it cannot place (another writer's commit came
/// between two of the engine's) wakes one, as every commit did before.
struct QuietHistory: Sendable {
    /// Every history entry at or below this token is the engine's own or was sent.
    private(set) var through: Int64 = .min
    /// The engine's own writes above ``through``, each the entries after `start` up to and
    /// including `end`: kept until what lies between them and `through` is quiet too.
    private var own: [(start: Int64, end: Int64)] = []
    /// The highest token seen: a lower one means another file now stands at the store's path.
    private var highest: Int64 = .min

    /// A write transaction of the engine moved the history from `before` to `after`. SQLite
    /// runs one write transaction at a time, so every entry in between is the engine's.
    mutating func wrote(from before: Int64, to after: Int64) {
        guard after > before else { return }
        own.append((before, after))
        absorb()
    }

    /// A push's scan sent every entry up to and including `token`.
    mutating func sent(through token: Int64) {
        through = max(through, token)
        absorb()
    }

    /// Whether a commit that left the history at `token` may hold an entry a round must see.
    mutating func needsRound(at token: Int64) -> Bool {
        if token < highest {
            // The history starts again (another store file): nothing of it is known.
            self = QuietHistory()
        }
        highest = max(highest, token)
        return token > through
    }

    /// Moves ``through`` over the engine's writes that now start within it.
    private mutating func absorb() {
        own.sort { $0.start < $1.start }
        var kept: [(start: Int64, end: Int64)] = []
        for range in own {
            if range.start <= through {
                through = max(through, range.end)
            } else {
                kept.append(range)
            }
        }
        // A gap that stays (a commit of another writer no scan has sent yet) keeps the
        // writes after it; the oldest are dropped past a few dozen, which costs a round.
        own = Array(kept.suffix(64))
    }
}
