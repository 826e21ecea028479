-- An application's own migration, its version a timestamp far past the extension's old V1000 scripts.
CREATE TABLE orders (id BIGINT PRIMARY KEY, placed_at TIMESTAMP WITH TIME ZONE NOT NULL);
