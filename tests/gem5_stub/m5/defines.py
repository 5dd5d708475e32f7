gem5Version = "24.0.0.1"
