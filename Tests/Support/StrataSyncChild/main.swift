// A sync client in its own process for the convergence tests.
print("not built yet")
