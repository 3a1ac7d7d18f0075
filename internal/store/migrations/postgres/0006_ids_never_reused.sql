-- Ids are never reused. An identity column draws from a sequence, which
-- never goes back, but BY DEFAULT lets an INSERT give its own id (one of
-- a deleted monitor, say); ALWAYS refuses that, so every id of the
-- tables whose ids clients see comes from the sequence.
ALTER TABLE monitors ALTER COLUMN id SET GENERATED ALWAYS;
ALTER TABLE llm_requests ALTER COLUMN id SET GENERATED ALWAYS;
