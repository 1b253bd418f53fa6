# A starting point that plans with a real Terraform and nothing to download: terraform_data is built
# into Terraform 1.4+. Replace it with your network's code (the agent plans this folder, `workingDir`).
variable "cidr" {
  type    = string
  default = "10.7.0.0/16"
}

resource "terraform_data" "network" {
  input = {
    cidr = var.cidr
    site = "ship-7"
  }
}

output "cidr" {
  value = terraform_data.network.output.cidr
}
