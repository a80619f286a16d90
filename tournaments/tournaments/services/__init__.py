"""Tournament services, one job each:

- `setup`: scheduling (the terms checked once, the seats and escrow shards created);
- `entries`: registering, unregistering, rebuys (money into a shard of the escrow);
- `rounds`: start, cancel, a round's standings, the prizes at the final;
- `terms_changes` and `new_tournaments`: a tournament's money terms and a new tournament, through
  maker-checker.
"""
