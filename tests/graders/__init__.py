"""The graders: visible/ ships to learners, hidden/ never ships, support/ is shared by both."""
