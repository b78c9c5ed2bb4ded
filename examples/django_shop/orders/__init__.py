"""The shop's orders: products with stock, orders, and the confirmation each one asks for."""
