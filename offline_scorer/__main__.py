from offline_scorer.cli.main import main

main()
